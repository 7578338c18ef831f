package theme

import "charm.land/bubbles/v2/textinput"

// StyleSearch gives a list's search line the theme's styles: the prompt
// in the key colour while it has the keyboard, muted otherwise, and a
// cursor that does not blink.
func (t *Theme) StyleSearch(in *textinput.Model) {
	st := in.Styles()
	st.Focused.Prompt = t.App.Key
	st.Blurred.Prompt = t.App.Muted
	st.Focused.Placeholder = t.App.Muted
	st.Blurred.Placeholder = t.App.Muted
	st.Cursor.Blink = false
	in.SetStyles(st)
}
